//! SPIR-V front end (in progress).
