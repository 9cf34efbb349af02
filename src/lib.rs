//! `@sveltycms/ale`: the Node-API addon. This crate only converts JS values
//! to and from the core crate (`crates/core`), which does all the work.

mod binding;
mod convert;
mod fast;
mod secrets;
