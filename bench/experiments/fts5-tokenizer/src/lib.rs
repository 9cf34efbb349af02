//! An experiment (bench/experiments/fts5-tokenizer.mjs): can the 4 KB
//! word-index write meet the 5% gate if SQLite itself makes the search
//! tokens? This loadable extension registers an FTS5 tokenizer,
//! `ale_envelope`, that wraps another (unicode61 unless told): a document
//! text that opens as an envelope of the column named in the tokenizer's
//! arguments yields the words `searchTokenText` makes for its plaintext
//! (word index, default folding); any other text, and every query, goes to
//! the wrapped tokenizer. The row then holds the envelope alone, and no
//! token crosses from JS.
//!
//! Not a product: the key comes from `ALE_EXPERIMENT_SECRET` in the
//! environment when the FTS5 table is opened (never from SQL, so never in
//! the schema), and a text that looks like an envelope but does not open is
//! tokenized as plain text, silently.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr::null_mut;
use std::sync::Arc;

use ale_core::keys::RingOptions;
use ale_core::search::index::{value_tokens, Indexes};
use ale_core::search::normalize::Folding;
use ale_core::search::tokens::ColumnTokens;
use ale_core::search::words::write_words;
use ale_core::{Context, KeyRing};
use rusqlite::ffi;
use zeroize::Zeroize;

type XToken = unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int;

/// The words index alone, as the bench's 4 KB scenario keeps.
const WORDS: Indexes = Indexes {
    contains: false,
    prefix: false,
    words: true,
};

/// How far the tokenizer goes with an envelope, to take its cost apart
/// (`ALE_EXPERIMENT_UPTO`): nothing (yields no token), open (decrypts, no
/// token), tokens (makes them, yields none), all (the default).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Upto {
    Nothing,
    Open,
    Tokens,
    All,
}

/// One `ale_envelope` tokenizer: the column it reads and the tokenizer it wraps.
struct Tokenizer {
    upto: Upto,
    ring: KeyRing,
    tenant: String,
    collection: String,
    field: String,
    column: Arc<ColumnTokens>,
    parent: ffi::fts5_tokenizer,
    parent_instance: *mut ffi::Fts5Tokenizer,
    // reused between calls; each plaintext form is wiped after use
    aad: Vec<u8>,
    plaintext: Vec<u8>,
    normalized: String,
    tokens: Vec<ale_core::search::tokens::Token>,
    words: Vec<u8>,
}

/// SQLite's entry point for this library.
///
/// # Safety
/// Called by SQLite with a valid connection and API table.
#[no_mangle]
pub unsafe extern "C" fn sqlite3_extension_init(
    db: *mut ffi::sqlite3,
    pz_err_msg: *mut *mut c_char,
    p_api: *mut ffi::sqlite3_api_routines,
) -> c_int {
    // SAFETY: forwarded from SQLite.
    unsafe { rusqlite::Connection::extension_init2(db, pz_err_msg, p_api, register) }
}

fn register(conn: rusqlite::Connection) -> rusqlite::Result<bool> {
    // SAFETY: the handle of the connection SQLite is loading us into.
    let api = unsafe { fts5_api(conn.handle()) }?;
    let mut methods = ffi::fts5_tokenizer {
        xCreate: Some(x_create),
        xDelete: Some(x_delete),
        xTokenize: Some(x_tokenize),
    };
    let no_api = || {
        rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("FTS5 API without xCreateTokenizer".into()),
        )
    };
    // SAFETY: `api` is SQLite's FTS5 API, valid while the connection is.
    let create = unsafe { (*api).xCreateTokenizer }.ok_or_else(no_api)?;
    // SAFETY: SQLite's own function, which copies `methods`.
    let rc = unsafe {
        create(
            api,
            c"ale_envelope".as_ptr(),
            api.cast(),
            &mut methods,
            None,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(rc),
            Some("xCreateTokenizer".into()),
        ));
    }
    // false: stays loaded for this connection only
    Ok(false)
}

/// The connection's FTS5 API, through `SELECT fts5(?1)`.
unsafe fn fts5_api(db: *mut ffi::sqlite3) -> rusqlite::Result<*mut ffi::fts5_api> {
    let mut stmt = null_mut();
    let mut api: *mut ffi::fts5_api = null_mut();
    // SAFETY: a valid connection; the statement is finalized before return.
    unsafe {
        let rc =
            ffi::sqlite3_prepare_v2(db, c"SELECT fts5(?1)".as_ptr(), -1, &mut stmt, null_mut());
        if rc == ffi::SQLITE_OK {
            ffi::sqlite3_bind_pointer(
                stmt,
                1,
                (&mut api as *mut *mut ffi::fts5_api).cast(),
                c"fts5_api_ptr".as_ptr(),
                None,
            );
            ffi::sqlite3_step(stmt);
        }
        ffi::sqlite3_finalize(stmt);
    }
    if api.is_null() {
        return Err(rusqlite::Error::SqliteFailure(
            ffi::Error::new(ffi::SQLITE_ERROR),
            Some("no FTS5 in this SQLite".into()),
        ));
    }
    Ok(api)
}

/// Arguments: tenant, collection, field, then the wrapped tokenizer and its
/// own arguments (unicode61 when none).
unsafe extern "C" fn x_create(
    user: *mut c_void,
    az_arg: *mut *const c_char,
    n_arg: c_int,
    pp_out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    guarded(|| {
        let api: *mut ffi::fts5_api = user.cast();
        let args: Vec<&CStr> = (0..usize::try_from(n_arg).unwrap_or(0))
            // SAFETY: FTS5 passes `n_arg` valid C strings.
            .map(|i| unsafe { CStr::from_ptr(*az_arg.add(i)) })
            .collect();
        if args.len() < 3 {
            return ffi::SQLITE_ERROR;
        }
        let text = |c: &CStr| c.to_str().map(str::to_owned);
        let (Ok(tenant), Ok(collection), Ok(field)) = (text(args[0]), text(args[1]), text(args[2]))
        else {
            return ffi::SQLITE_ERROR;
        };
        let Ok(secret) = std::env::var("ALE_EXPERIMENT_SECRET").map(zeroize::Zeroizing::new) else {
            return ffi::SQLITE_ERROR;
        };
        let upto = match std::env::var("ALE_EXPERIMENT_UPTO").as_deref() {
            Ok("nothing") => Upto::Nothing,
            Ok("open") => Upto::Open,
            Ok("tokens") => Upto::Tokens,
            Ok("all") | Err(_) => Upto::All,
            Ok(_) => return ffi::SQLITE_ERROR,
        };
        let Ok(ring) = KeyRing::from_secrets(&[secret.as_str()], RingOptions::default()) else {
            return ffi::SQLITE_ERROR;
        };
        let column = match Context::new(&tenant, &collection, &field)
            .and_then(|ctx| ring.column_tokens(0, &ctx))
        {
            Ok(c) => c,
            Err(_) => return ffi::SQLITE_ERROR,
        };
        // the wrapped tokenizer
        let parent_name = args.get(3).map_or(c"unicode61".as_ptr(), |c| c.as_ptr());
        let mut parent_args: Vec<*const c_char> = args.iter().skip(4).map(|c| c.as_ptr()).collect();
        let mut parent_user = null_mut();
        let mut parent = ffi::fts5_tokenizer {
            xCreate: None,
            xDelete: None,
            xTokenize: None,
        };
        let mut parent_instance = null_mut();
        // SAFETY: SQLite's FTS5 API and tokenizer methods, with valid arguments.
        unsafe {
            let Some(find) = (*api).xFindTokenizer else {
                return ffi::SQLITE_ERROR;
            };
            let rc = find(api, parent_name, &mut parent_user, &mut parent);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let (Some(create), Some(_), Some(_)) =
                (parent.xCreate, parent.xDelete, parent.xTokenize)
            else {
                return ffi::SQLITE_ERROR;
            };
            let rc = create(
                parent_user,
                parent_args.as_mut_ptr(),
                c_int::try_from(parent_args.len()).unwrap_or(0),
                &mut parent_instance,
            );
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        let tokenizer = Box::new(Tokenizer {
            upto,
            ring,
            tenant,
            collection,
            field,
            column,
            parent,
            parent_instance,
            aad: Vec::new(),
            plaintext: Vec::new(),
            normalized: String::new(),
            tokens: Vec::new(),
            words: Vec::new(),
        });
        // SAFETY: FTS5's out pointer.
        unsafe { *pp_out = Box::into_raw(tokenizer).cast() };
        ffi::SQLITE_OK
    })
}

unsafe extern "C" fn x_delete(p: *mut ffi::Fts5Tokenizer) {
    guarded(|| {
        // SAFETY: made by x_create, deleted once by FTS5.
        let t = unsafe { Box::from_raw(p.cast::<Tokenizer>()) };
        if let Some(delete) = t.parent.xDelete {
            // SAFETY: the wrapped instance, deleted with ours.
            unsafe { delete(t.parent_instance) };
        }
        ffi::SQLITE_OK
    });
}

unsafe extern "C" fn x_tokenize(
    p: *mut ffi::Fts5Tokenizer,
    ctx: *mut c_void,
    flags: c_int,
    text: *const c_char,
    n_text: c_int,
    x_token: Option<XToken>,
) -> c_int {
    guarded(|| {
        // SAFETY: made by x_create; FTS5 calls one method at a time per instance.
        let t = unsafe { &mut *p.cast::<Tokenizer>() };
        let Some(emit) = x_token else {
            return ffi::SQLITE_ERROR;
        };
        if flags & ffi::FTS5_TOKENIZE_DOCUMENT != 0 && n_text > 0 {
            // SAFETY: FTS5's text, `n_text` bytes.
            let bytes = unsafe {
                std::slice::from_raw_parts(text.cast::<u8>(), usize::try_from(n_text).unwrap_or(0))
            };
            if bytes.starts_with(b"v1:") && t.open(bytes) {
                if t.upto < Upto::All {
                    return ffi::SQLITE_OK;
                }
                let mut rc = ffi::SQLITE_OK;
                for word in t.words.split(|b| *b == b' ').filter(|w| !w.is_empty()) {
                    let len = c_int::try_from(word.len()).unwrap_or(0);
                    // SAFETY: FTS5's callback with its context; the word outlives the call.
                    rc = unsafe { emit(ctx, 0, word.as_ptr().cast(), len, 0, 0) };
                    if rc != ffi::SQLITE_OK {
                        break;
                    }
                }
                return rc;
            }
        }
        // x_create made this tokenizer only with all three of the wrapped one's methods.
        let Some(tokenize) = t.parent.xTokenize else {
            return ffi::SQLITE_ERROR;
        };
        // SAFETY: the wrapped tokenizer, with FTS5's own arguments.
        unsafe { tokenize(t.parent_instance, ctx, flags, text, n_text, x_token) }
    })
}

/// A callback's body, with a panic turned into `SQLITE_ERROR` rather than
/// unwinding into SQLite (which would abort the process).
fn guarded(body: impl FnOnce() -> c_int) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or(ffi::SQLITE_ERROR)
}

impl Tokenizer {
    /// Opens `envelope` and writes its tokens' words into `self.words`;
    /// false (nothing written) when it does not open as UTF-8 text.
    fn open(&mut self, envelope: &[u8]) -> bool {
        self.words.clear();
        if self.upto == Upto::Nothing {
            return true;
        }
        let Ok(ctx) = Context::new(&self.tenant, &self.collection, &self.field) else {
            return false;
        };
        if self
            .ring
            .open_into(envelope, &ctx, &mut self.aad, &mut self.plaintext)
            .is_err()
        {
            return false;
        }
        let opened = match std::str::from_utf8(&self.plaintext) {
            Ok(_) if self.upto == Upto::Open => true,
            Ok(text) => {
                value_tokens(
                    &self.column,
                    text,
                    WORDS,
                    Folding { accents: false },
                    &mut self.normalized,
                    &mut self.tokens,
                );
                write_words(&self.tokens, &mut self.words);
                true
            }
            Err(_) => false,
        };
        self.plaintext.zeroize();
        self.normalized.zeroize();
        opened
    }
}
