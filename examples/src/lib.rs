//! Shared helpers for the examples (in progress).
