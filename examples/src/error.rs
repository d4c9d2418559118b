//! One error type for every example: a failed Vulkan call names the call and the result,
//! everything else carries a sentence.

use ash::vk;
use std::fmt;

#[derive(Debug)]
pub enum Error {
    /// A Vulkan entry point returned an error code.
    Vulkan { call: &'static str, result: vk::Result },
    /// Anything else: a missing manifest, an unsuitable device, a malformed OBJ file.
    Other(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Other(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Debug gives the enum name (ERROR_DEVICE_LOST), Display ash's description of it.
            Error::Vulkan { call, result } => write!(f, "{call} failed: {result:?} ({result})"),
            Error::Other(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

/// Attaches the name of the Vulkan call to its error code: `device.create_buffer(..).vk("vkCreateBuffer")?`.
pub trait VkResultExt<T> {
    fn vk(self, call: &'static str) -> Result<T>;
}

impl<T> VkResultExt<T> for std::result::Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> Result<T> {
        self.map_err(|result| Error::Vulkan { call, result })
    }
}
