//! Acceleration-structure transcoder (in progress).
