//! What a module is compiled *for*: the shader stage of the entry point, and how ray queries
//! become device code. `CompileOptions::target` carries it; `lower` picks the stage's I/O and
//! the ray-query lowering from it (`lower/stage`, `lower/rayquery`).

use spirv::ExecutionModel;
use std::fmt;

/// A shader stage: the SPIR-V execution model of the entry point compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    Compute,
    Vertex,
    TessellationControl,
    TessellationEvaluation,
    Geometry,
    Fragment,
    RayGeneration,
    Intersection,
    AnyHit,
    ClosestHit,
    Miss,
    Callable,
}

impl Stage {
    /// Every stage, in `VkShaderStageFlagBits` order.
    pub const ALL: [Stage; 12] = [
        Stage::Vertex,
        Stage::TessellationControl,
        Stage::TessellationEvaluation,
        Stage::Geometry,
        Stage::Fragment,
        Stage::Compute,
        Stage::RayGeneration,
        Stage::AnyHit,
        Stage::ClosestHit,
        Stage::Miss,
        Stage::Intersection,
        Stage::Callable,
    ];

    /// The SPIR-V execution model of an entry point of this stage.
    pub fn execution_model(self) -> ExecutionModel {
        match self {
            Stage::Compute => ExecutionModel::GLCompute,
            Stage::Vertex => ExecutionModel::Vertex,
            Stage::TessellationControl => ExecutionModel::TessellationControl,
            Stage::TessellationEvaluation => ExecutionModel::TessellationEvaluation,
            Stage::Geometry => ExecutionModel::Geometry,
            Stage::Fragment => ExecutionModel::Fragment,
            Stage::RayGeneration => ExecutionModel::RayGenerationKHR,
            Stage::Intersection => ExecutionModel::IntersectionKHR,
            Stage::AnyHit => ExecutionModel::AnyHitKHR,
            Stage::ClosestHit => ExecutionModel::ClosestHitKHR,
            Stage::Miss => ExecutionModel::MissKHR,
            Stage::Callable => ExecutionModel::CallableKHR,
        }
    }

    /// The stage of a SPIR-V execution model; `None` for models Vulkan has no stage for here
    /// (OpenCL kernels, task and mesh shaders).
    pub fn from_execution_model(model: ExecutionModel) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| s.execution_model() == model)
    }

    /// The stage's name as messages use it ("fragment", "closest-hit").
    pub fn name(self) -> &'static str {
        match self {
            Stage::Compute => "compute",
            Stage::Vertex => "vertex",
            Stage::TessellationControl => "tessellation control",
            Stage::TessellationEvaluation => "tessellation evaluation",
            Stage::Geometry => "geometry",
            Stage::Fragment => "fragment",
            Stage::RayGeneration => "ray generation",
            Stage::Intersection => "intersection",
            Stage::AnyHit => "any-hit",
            Stage::ClosestHit => "closest-hit",
            Stage::Miss => "miss",
            Stage::Callable => "callable",
        }
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How `OpRayQuery*KHR` instructions become device code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RayQueryLowering {
    /// The fixed-function RT unit walks the BVH: `TRACE` arms a query slot, `CONT`/`WAIT`
    /// step it from candidate to candidate, `GETW` reads its hit window (`ISA.md`, `BVH.md`).
    #[default]
    Rtu,
    /// The rdna2 architecture: a traversal loop in the shader around `ISECT`
    /// (`lower/rayquery/rdna2/`).
    Rdna2,
}

impl RayQueryLowering {
    pub fn name(self) -> &'static str {
        match self {
            RayQueryLowering::Rtu => "rtu",
            RayQueryLowering::Rdna2 => "rdna2",
        }
    }

    /// The lowering of a device of architecture `arch`.
    pub fn for_arch(arch: vortex_model::config::RtArch) -> RayQueryLowering {
        match arch {
            vortex_model::config::RtArch::Rtu => RayQueryLowering::Rtu,
            vortex_model::config::RtArch::Rdna2 => RayQueryLowering::Rdna2,
        }
    }
}

/// The compile target: the entry point's stage and the ray-query lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    pub stage: Stage,
    pub ray_query: RayQueryLowering,
    /// The device records a ray log (`VORTEX_RAYLOG`): a lowering whose traversal runs in
    /// the shader reports each query's ray and result to it (`RQLOG`, `docs/RAYLOG.md`).
    pub raylog: bool,
}

impl Target {
    /// A compute kernel with ray queries on the RT unit (what `vkCreateComputePipelines`
    /// compiles).
    pub const COMPUTE: Target = Target { stage: Stage::Compute, ray_query: RayQueryLowering::Rtu, raylog: false };

    /// `stage` with the default ray-query lowering.
    pub fn stage(stage: Stage) -> Target {
        Target { stage, ..Target::COMPUTE }
    }
}

impl Default for Target {
    fn default() -> Target {
        Target::COMPUTE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_map_to_and_from_execution_models() {
        for s in Stage::ALL {
            assert_eq!(Stage::from_execution_model(s.execution_model()), Some(s), "{s}");
        }
        let models: std::collections::HashSet<_> = Stage::ALL.iter().map(|s| s.execution_model()).collect();
        assert_eq!(models.len(), Stage::ALL.len(), "one model per stage");
        assert_eq!(Stage::from_execution_model(ExecutionModel::Kernel), None);
        assert_eq!(Stage::from_execution_model(ExecutionModel::MeshEXT), None);
        assert_eq!(Stage::Compute.execution_model(), ExecutionModel::GLCompute);
        assert_eq!(Stage::ClosestHit.to_string(), "closest-hit");
        assert_eq!(Target::default(), Target::COMPUTE);
    }
}
