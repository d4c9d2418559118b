//! Cases, verdicts and the registry.

use crate::fw::Env;
use ash::vk;
use std::fmt;

/// Why a case did not pass. `NotSupported` is dEQP's NotSupportedError (the device lacks
/// something the case needs); everything else is a failure.
#[derive(Debug)]
pub enum TestError {
    Fail(String),
    NotSupported(String),
}

impl fmt::Display for TestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TestError::Fail(m) => write!(f, "Fail: {m}"),
            TestError::NotSupported(m) => write!(f, "NotSupported: {m}"),
        }
    }
}

pub type TestResult<T = ()> = Result<T, TestError>;

/// `call(...).vk("vkCallName")?`: a Vulkan error code fails the case, naming the call.
pub trait VkCheck<T> {
    fn vk(self, call: &str) -> TestResult<T>;
}

impl<T> VkCheck<T> for Result<T, vk::Result> {
    fn vk(self, call: &str) -> TestResult<T> {
        self.map_err(|r| TestError::Fail(format!("{call} failed: {r:?}")))
    }
}

/// Fails the current case with a formatted message.
#[macro_export]
macro_rules! fail {
    ($($t:tt)*) => { return Err($crate::case::TestError::Fail(format!($($t)*))) };
}

/// Ends the current case as NotSupported with a formatted reason.
#[macro_export]
macro_rules! not_supported {
    ($($t:tt)*) => { return Err($crate::case::TestError::NotSupported(format!($($t)*))) };
}

pub type CaseFn = Box<dyn Fn(&Env) -> TestResult + Send + Sync>;

/// One leaf case: its full dEQP name and what it runs.
pub struct Case {
    pub name: String,
    pub run: CaseFn,
}

impl Case {
    pub fn new(name: impl Into<String>, run: impl Fn(&Env) -> TestResult + Send + Sync + 'static) -> Self {
        Case { name: name.into(), run: Box::new(run) }
    }
}

/// The dEQP name prefix of every case here.
pub const ROOT: &str = "dEQP-VK.ray_query";

/// The staged subsets of the research notes (§5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    C0,
    C1,
    C2,
    /// Host builds (`cpu_built`, `accelerationStructureHostCommands`).
    C4,
}

impl Stage {
    pub const ALL: [Stage; 4] = [Stage::C0, Stage::C1, Stage::C2, Stage::C4];

    pub fn name(self) -> &'static str {
        match self {
            Stage::C0 => "C0",
            Stage::C1 => "C1",
            Stage::C2 => "C2",
            Stage::C4 => "C4",
        }
    }

    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.name().eq_ignore_ascii_case(s))
    }

    /// The stage a case belongs to: builtin is C0, host builds of the acceleration-structure
    /// matrix C4, the rest of it C2, the small semantic groups C1.
    pub fn of(name: &str) -> Stage {
        let rest = name.strip_prefix(ROOT).and_then(|r| r.strip_prefix('.')).unwrap_or(name);
        if rest.starts_with("acceleration_structures.") && rest.contains(".cpu_built") {
            Stage::C4
        } else if rest.starts_with("builtin.") {
            Stage::C0
        } else if rest.starts_with("acceleration_structures.") {
            Stage::C2
        } else {
            Stage::C1
        }
    }

    /// The dEQP case list of this stage (`lists/`): C0-C2 from the real deqp-vk; C4 made by
    /// running dEQP's generator loops with the host build type (no real list was at hand).
    pub fn list(self) -> &'static str {
        match self {
            Stage::C0 => include_str!("../lists/C0.txt"),
            Stage::C1 => include_str!("../lists/C1.txt"),
            Stage::C2 => include_str!("../lists/C2.txt"),
            Stage::C4 => include_str!("../lists/C4.txt"),
        }
    }
}

/// Every case of C0-C2, in dEQP's registration order (plus the runner's self-test cases
/// when `VORTEX_CTS_SELFTEST` is set).
pub fn all_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    crate::groups::register(&mut cases);
    if std::env::var_os(crate::runner::selftest::ENV).is_some() {
        crate::runner::selftest::register(&mut cases);
    }
    cases
}
