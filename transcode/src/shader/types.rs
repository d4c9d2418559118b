//! SPIR-V types and the two layouts the compiler uses for them.
//!
//! - The *register image*: every value lives in consecutive 32-bit registers, flattened in
//!   declaration order (struct members, array elements, matrix columns, vector components);
//!   bools take one register (0/1), 64-bit scalars two (low word first). Private memory and
//!   LMEM store values in the same image (4 bytes per register), so a Function, Private or
//!   Workgroup variable needs no layout of its own.
//! - The *explicit layout* of buffer memory (Offset / ArrayStride / MatrixStride / RowMajor
//!   decorations as glslang emits them for std140, std430 and scalar), used by global loads
//!   and stores in `lower::mem`.

use super::error::{invalid, limit, unsupported, Result};
use spirv::{Dim, ImageFormat, StorageClass};

pub(crate) type Id = u32;

/// Largest register image of one value. With [`super::emit::MAX_REGS`] this keeps every
/// `base + offset` register computation inside `u16`.
pub(crate) const MAX_VALUE_REGS: u64 = 16 * 1024;

/// Deepest type nesting accepted: layout and register walks recurse over it.
pub(crate) const MAX_TYPE_DEPTH: u32 = 64;

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Type {
    Void,
    Bool,
    Int {
        width: u32,
        signed: bool,
    },
    Float {
        width: u32,
    },
    Vector {
        elem: Id,
        n: u32,
    },
    Matrix {
        col: Id,
        cols: u32,
    },
    Array {
        elem: Id,
        len: u32,
    },
    RuntimeArray {
        elem: Id,
    },
    Struct {
        members: Vec<Id>,
    },
    Pointer {
        sc: StorageClass,
        pointee: Id,
    },
    Function,
    Image {
        sampled: Id,
        dim: Dim,
        arrayed: bool,
        ms: bool,
        format: ImageFormat,
    },
    Sampler,
    /// An image with its sampler. A texel buffer's (`samplerBuffer`) value is its image
    /// descriptor's address; any other's is the image descriptor's address followed by the
    /// sampler record's.
    SampledImage {
        image: Id,
    },
    AccelStruct,
    RayQuery,
}

/// The pointee of a forward-declared pointer type not yet defined.
pub(crate) const FORWARD: Id = 0;

/// A pointer into physical storage buffer memory (a 64-bit address at run time).
pub(crate) fn is_physical(t: &Type) -> bool {
    matches!(t, Type::Pointer { sc: StorageClass::PhysicalStorageBuffer, .. })
}

/// What one scalar component is, as far as instruction selection cares (see `lower::num`
/// for how each lives in registers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Bool,
    /// 8- and 16-bit integers: one register, zero-extended.
    I8,
    I16,
    /// 32-bit integer.
    I32,
    /// 64-bit integer (a register pair).
    I64,
    /// 16-bit float: one register holding the f32 of the same value.
    F16,
    F32,
    /// 64-bit float: a register pair of raw IEEE bits.
    F64,
}

impl Scalar {
    /// Registers per component.
    pub fn regs(self) -> u32 {
        if self.bits() == 64 {
            2
        } else {
            1
        }
    }

    /// Width in bits (booleans: the 32 of their register).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::I8 => 8,
            Scalar::I16 | Scalar::F16 => 16,
            Scalar::I64 | Scalar::F64 => 64,
            _ => 32,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64)
    }

    /// 8- or 16-bit integer.
    pub fn is_narrow_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16)
    }

    /// Bytes in explicitly laid-out memory.
    pub fn bytes(self) -> u32 {
        self.bits() / 8
    }
}

/// A scalar or vector type: component kind and count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub scalar: Scalar,
    pub n: u32,
}

/// Type table: `SPIR-V id -> Type`, filled in declaration order, so every type a type refers
/// to is already present (no cycles by construction).
#[derive(Default)]
pub(crate) struct Types {
    map: std::collections::HashMap<Id, Type>,
    depth: std::collections::HashMap<Id, u32>,
}

impl Types {
    /// Adds a type whose operands are already present. A physical-storage-buffer pointer
    /// may replace its own forward declaration (`OpTypeForwardPointer`): such pointers are
    /// 64-bit addresses and never look into their pointee, so they may form cycles.
    pub fn insert(&mut self, id: Id, t: Type) -> Result<()> {
        let forward = matches!(self.map.get(&id), Some(Type::Pointer { pointee: FORWARD, .. }));
        if self.map.contains_key(&id) && !(forward && is_physical(&t)) {
            // A redefinition could make a type contain itself.
            return Err(invalid!("type %{id} is defined more than once"));
        }
        let children: Vec<Id> = match &t {
            Type::Vector { elem, .. } | Type::Array { elem, .. } | Type::RuntimeArray { elem } => vec![*elem],
            Type::Matrix { col, .. } => vec![*col],
            Type::Struct { members } => members.clone(),
            Type::Pointer { pointee, .. } if !is_physical(&t) => vec![*pointee],
            Type::Image { sampled, .. } => vec![*sampled],
            Type::SampledImage { image } => vec![*image],
            _ => vec![],
        };
        let depth = 1 + children.iter().map(|c| self.depth.get(c).copied().unwrap_or(0)).max().unwrap_or(0);
        if depth > MAX_TYPE_DEPTH {
            return Err(limit!("type %{id} is nested more than {MAX_TYPE_DEPTH} levels deep"));
        }
        self.depth.insert(id, depth);
        self.map.insert(id, t);
        Ok(())
    }

    pub fn contains(&self, id: Id) -> bool {
        self.map.contains_key(&id)
    }

    pub fn get(&self, id: Id) -> Result<&Type> {
        self.map.get(&id).ok_or_else(|| invalid!("%{id} is not a type"))
    }

    /// Registers in the register image of a value of type `id`.
    pub fn regs(&self, id: Id) -> Result<u32> {
        let n = self.regs64(id)?;
        if n > MAX_VALUE_REGS {
            return Err(limit!("a value of type %{id} needs {n} registers"));
        }
        Ok(n as u32)
    }

    fn regs64(&self, id: Id) -> Result<u64> {
        Ok(match self.get(id)? {
            Type::Bool | Type::RayQuery => 1,
            Type::Int { width, .. } | Type::Float { width } => {
                if *width == 64 {
                    2
                } else {
                    1
                }
            }
            Type::Vector { elem, n } => self.regs64(*elem)? * *n as u64,
            Type::Matrix { col, cols } => self.regs64(*col)? * *cols as u64,
            Type::Array { elem, len } => self.regs64(*elem)?.saturating_mul(*len as u64),
            Type::Struct { members } => {
                let mut s = 0u64;
                for m in members {
                    s = s.saturating_add(self.regs64(*m)?);
                }
                s
            }
            // Images and samplers (descriptor address), acceleration structures (device
            // address) and pointers held as values are 64-bit addresses.
            Type::Image { .. } | Type::Sampler | Type::AccelStruct | Type::Pointer { .. } => 2,
            Type::SampledImage { image } => match self.get(*image)? {
                Type::Image { dim: Dim::DimBuffer, .. } => 2,
                _ => 4,
            },
            Type::Void | Type::Function | Type::RuntimeArray { .. } => {
                return Err(unsupported!("values of type %{id} ({}) cannot live in registers", self.describe(id)))
            }
        })
    }

    /// Register offset of member/element `index` inside a composite of type `id`, and the
    /// member's type.
    pub fn member(&self, id: Id, index: u32) -> Result<(u32, Id)> {
        match self.get(id)? {
            Type::Vector { elem, n } | Type::Matrix { col: elem, cols: n } | Type::Array { elem, len: n } => {
                if index >= *n {
                    return Err(invalid!("index {index} out of range for %{id} ({})", self.describe(id)));
                }
                Ok((index * self.regs(*elem)?, *elem))
            }
            Type::Struct { members } => {
                let m = *members
                    .get(index as usize)
                    .ok_or_else(|| invalid!("member {index} out of range for struct %{id}"))?;
                let mut off = 0;
                for &prev in &members[..index as usize] {
                    off += self.regs(prev)?;
                }
                Ok((off, m))
            }
            _ => Err(invalid!("%{id} ({}) is not a composite", self.describe(id))),
        }
    }

    pub fn scalar(&self, id: Id) -> Result<Scalar> {
        match self.get(id)? {
            Type::Bool => Ok(Scalar::Bool),
            Type::Int { width: 8, .. } => Ok(Scalar::I8),
            Type::Int { width: 16, .. } => Ok(Scalar::I16),
            Type::Int { width: 32, .. } => Ok(Scalar::I32),
            Type::Int { width: 64, .. } => Ok(Scalar::I64),
            Type::Float { width: 16 } => Ok(Scalar::F16),
            Type::Float { width: 32 } => Ok(Scalar::F32),
            Type::Float { width: 64 } => Ok(Scalar::F64),
            _ => Err(invalid!("%{id} ({}) is not a scalar type", self.describe(id))),
        }
    }

    /// Component kind and count of a scalar or vector type.
    pub fn shape(&self, id: Id) -> Result<Shape> {
        match self.get(id)? {
            Type::Vector { elem, n } => Ok(Shape { scalar: self.scalar(*elem)?, n: *n }),
            _ => Ok(Shape { scalar: self.scalar(id)?, n: 1 }),
        }
    }

    pub fn pointee(&self, id: Id) -> Result<(StorageClass, Id)> {
        match self.get(id)? {
            Type::Pointer { pointee: FORWARD, .. } => Err(invalid!("pointer type %{id} is declared but never defined")),
            Type::Pointer { sc, pointee } => Ok((*sc, *pointee)),
            _ => Err(invalid!("%{id} is not a pointer type")),
        }
    }

    /// Ray-query slots a variable of this type needs (queries live only in arrays).
    pub fn queries(&self, id: Id) -> Result<u32> {
        Ok(match self.get(id)? {
            Type::RayQuery => 1,
            Type::Array { elem, len } => self.queries(*elem)?.saturating_mul(*len),
            Type::Struct { members } => {
                for m in members {
                    if self.queries(*m)? > 0 {
                        return Err(unsupported!("ray queries inside a struct (%{id})"));
                    }
                }
                0
            }
            _ => 0,
        })
    }

    /// Short human-readable description for messages.
    pub fn describe(&self, id: Id) -> String {
        match self.map.get(&id) {
            None => format!("%{id}"),
            Some(t) => match t {
                Type::Void => "void".into(),
                Type::Bool => "bool".into(),
                Type::Int { width, signed } => format!("{}{width}", if *signed { "i" } else { "u" }),
                Type::Float { width } => format!("f{width}"),
                Type::Vector { elem, n } => format!("{}x{n}", self.describe(*elem)),
                Type::Matrix { col, cols } => format!("mat{cols}<{}>", self.describe(*col)),
                Type::Array { elem, len } => format!("{}[{len}]", self.describe(*elem)),
                Type::RuntimeArray { elem } => format!("{}[]", self.describe(*elem)),
                Type::Struct { members } => format!("struct({} members)", members.len()),
                Type::Pointer { sc: StorageClass::PhysicalStorageBuffer, pointee } => {
                    format!("ptr<physical, %{pointee}>")
                }
                Type::Pointer { sc, pointee } => format!("ptr<{sc:?}, {}>", self.describe(*pointee)),
                Type::Function => "function".into(),
                Type::Image { dim, .. } => format!("image{dim:?}"),
                Type::Sampler => "sampler".into(),
                Type::SampledImage { .. } => "sampled image".into(),
                Type::AccelStruct => "acceleration structure".into(),
                Type::RayQuery => "ray query".into(),
            },
        }
    }
}
