//! Search tokens: what makes an encrypted text column searchable without
//! the database seeing its text (docs/search.md).
//!
//! A value is normalized ([`normalize`]: NFKC, full case folding, and
//! accent folding when asked), cut into grams ([`grams`]: trigrams for
//! "contains", word prefixes for "starts with", whole words for word
//! search), and each gram becomes a 64-bit token under a key of the column
//! ([`tokens`]: AES-CMAC under a key derived for `tenant:collection:field`).
//! The database compares tokens; the package decrypts the candidates and
//! keeps exact matches only, so a token that two grams share costs a
//! decryption, never a wrong result.
//!
//! Range indexes ([`range`]) use the same column keys: a number, bigint or
//! date becomes a 64-bit order-preserving code, and each node of a 16-ary
//! tree over the codes that holds it becomes a token.
//!
//! A ring keeps the column keys it derives ([`columns`]). FTS5 and
//! FULLTEXT index tokens as words of 6 base32hex digits ([`words`]).

pub mod columns;
pub mod grams;
pub mod index;
pub mod matching;
pub mod normalize;
pub mod range;
pub mod sorting;
pub(crate) mod standalone;
pub mod tokens;
pub mod words;
