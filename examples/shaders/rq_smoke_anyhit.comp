#version 460
#extension GL_GOOGLE_include_directive : require

// Any-hit pass: a non-opaque candidate is confirmed only when its primitive index is
// even, so the committed hit is the closest among opaque hits and accepted candidates.
bool accept_candidate(int primitive_index) {
    return (primitive_index & 1) == 0;
}

#include "rq_smoke_common.glsl"
