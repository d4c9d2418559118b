//! Shared test helpers.

pub mod rq;
