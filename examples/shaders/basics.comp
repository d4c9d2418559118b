#version 460
// Workgroup shared memory with barriers, atomics, push constants, a specialization-constant
// workgroup size, structs, arrays, loops with divergent trip counts, functions with out
// parameters, and the built-in ids. Each invocation writes one Result.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint SCALE = 1u;

struct Result {
    uvec4 ids;       // global id, local id, workgroup id, local index
    uint reversed;   // value written by the mirror invocation through shared memory
    uint collatz;    // divergent loop trip count
    uint bits;       // bitfield and bit-count results
    float f;         // float math through a function
    uint ubo;        // values read from a std140 uniform block
};

layout(std430, binding = 0) buffer Results { Result results[]; };
layout(std430, binding = 1) buffer Counter { uint total; uint maximum; uint groups_seen; };
layout(std140, binding = 2) uniform Table { uvec4 factors[4]; float offsets[4]; };
layout(push_constant) uniform Params { uint n; float bias; };

shared uint scratch[1024];

uint collatz_steps(uint x) {
    uint steps = 0u;
    while (x > 1u) {
        x = (x % 2u == 0u) ? x / 2u : 3u * x + 1u;
        steps++;
        if (steps > 500u) {
            break;
        }
    }
    return steps;
}

void split(float x, out float whole, out float frac) {
    whole = floor(x);
    frac = x - whole;
}

void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint lid = gl_LocalInvocationIndex;
    uint size = gl_WorkGroupSize.x;
    scratch[lid] = gid * SCALE;
    barrier();
    uint mirror = scratch[size - 1u - lid];
    barrier();
    if (gid >= n) {
        return;
    }
    atomicAdd(total, gid);
    atomicMax(maximum, gid);
    if (lid == 0u) {
        atomicAdd(groups_seen, 1u);
    }
    float whole, frac;
    split(float(gid) * 0.75 + bias, whole, frac);
    Result r;
    r.ids = uvec4(gid, gl_LocalInvocationID.x, gl_WorkGroupID.x, lid);
    r.reversed = mirror;
    r.collatz = collatz_steps(gid + 1u);
    r.bits = bitCount(gid) | (findMSB(gid + 1u) << 8) | (bitfieldExtract(gid, 2, 3) << 16);
    r.f = whole * 10.0 + frac + sqrt(float(gid));
    r.ubo = factors[lid % 4u].y * 1000u + uint(offsets[lid % 4u]);
    results[gid] = r;
}
