#version 450
// Specialization constants of every scalar type, overridden at pipeline creation, used in
// arithmetic, as an array length, in spec-constant expressions (OpSpecConstantOp), and one
// left at its default.
//! dispatch 1
//! spec 0 u32 5
//! spec 1 i32 -7
//! spec 2 f32 2.5
//! spec 3 bool true
//! spec 5 u32 3
//! buffer 0 storage 512
//! check 0 exact
layout(local_size_x = 16) in;
layout(constant_id = 0) const uint A = 1u;
layout(constant_id = 1) const int B = 2;
layout(constant_id = 2) const float C = 1.0;
layout(constant_id = 3) const bool D = false;
layout(constant_id = 4) const int E = 40;
layout(constant_id = 5) const uint LEN = 2u;
const uint AB = A * 3u + uint(B);
const int SH = (B << 2) ^ E;
const bool ND = !D;
layout(std430, binding = 0) writeonly buffer O { float v[]; } o;

void main() {
    uint i = gl_LocalInvocationID.x;
    float arr[LEN + 1u];
    for (uint k = 0u; k < LEN + 1u; k++) arr[k] = float(k) * C;
    o.v[8u * i] = float(A * i);
    o.v[8u * i + 1u] = float(B + int(i));
    o.v[8u * i + 2u] = C * float(i);
    o.v[8u * i + 3u] = D ? 1.0 : -1.0;
    o.v[8u * i + 4u] = float(E);
    o.v[8u * i + 5u] = float(arr.length()) + arr[i % (LEN + 1u)];
    o.v[8u * i + 6u] = float(AB) + float(SH);
    o.v[8u * i + 7u] = ND ? 3.0 : 4.0;
}
