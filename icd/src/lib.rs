//! ICD (in progress).
