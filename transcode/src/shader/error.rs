//! Compile errors. Every way a module can fail to compile ends here, with a message that names
//! the offending capability, instruction, id or binding; the compiler never panics on input.

use std::fmt;

/// Why a SPIR-V module could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// Not a well-formed SPIR-V binary (bad magic, truncated, unknown opcode, ...).
    Parse(String),
    /// A well-formed binary that breaks a SPIR-V rule the compiler relies on (undefined ids,
    /// wrong operand kinds, a missing decoration, recursion, ...).
    Invalid(String),
    /// Valid SPIR-V that uses something this compiler does not implement; the message names it.
    Unsupported(String),
    /// The module disagrees with the pipeline: missing entry point, a binding the pipeline
    /// layout lacks, a descriptor of the wrong type, a malformed specialization value.
    Interface(String),
    /// A device limit is exceeded (registers, ray-query slots, LMEM, private memory).
    Limit(String),
}

impl CompileError {
    pub fn message(&self) -> &str {
        match self {
            CompileError::Parse(m)
            | CompileError::Invalid(m)
            | CompileError::Unsupported(m)
            | CompileError::Interface(m)
            | CompileError::Limit(m) => m,
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self {
            CompileError::Parse(_) => "malformed SPIR-V",
            CompileError::Invalid(_) => "invalid SPIR-V",
            CompileError::Unsupported(_) => "unsupported SPIR-V",
            CompileError::Interface(_) => "pipeline interface mismatch",
            CompileError::Limit(_) => "device limit exceeded",
        };
        write!(f, "{kind}: {}", self.message())
    }
}

impl std::error::Error for CompileError {}

pub type Result<T> = std::result::Result<T, CompileError>;

/// Shorthands for building errors with `format!` arguments.
macro_rules! invalid {
    ($($t:tt)*) => { $crate::shader::error::CompileError::Invalid(format!($($t)*)) };
}
macro_rules! unsupported {
    ($($t:tt)*) => { $crate::shader::error::CompileError::Unsupported(format!($($t)*)) };
}
macro_rules! interface {
    ($($t:tt)*) => { $crate::shader::error::CompileError::Interface(format!($($t)*)) };
}
macro_rules! limit {
    ($($t:tt)*) => { $crate::shader::error::CompileError::Limit(format!($($t)*)) };
}
pub(crate) use {interface, invalid, limit, unsupported};
