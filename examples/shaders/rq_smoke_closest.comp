#version 460
#extension GL_GOOGLE_include_directive : require

// Closest-hit pass: every triangle candidate is confirmed, so the committed hit is the
// closest intersection of all, opaque or not.
bool accept_candidate(int primitive_index) {
    return true;
}

#include "rq_smoke_common.glsl"
