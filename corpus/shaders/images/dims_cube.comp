#version 450
// A cube storage image (6 faces, r32f): the face is the third coordinate; every face is
// written from a computed value, then imageSize.
//! dispatch 1
//! image 0 storage cube r32_sfloat 4 4 1 = rand f32 0 1 63
//! image 1 storage cube r32_sfloat 4 4 1
//! buffer 2 storage 16
//! check 1 exact
//! check 2 exact
layout(local_size_x = 4, local_size_y = 4, local_size_z = 6) in;
layout(r32f, binding = 0) readonly uniform imageCube a;
layout(r32f, binding = 1) writeonly uniform imageCube b;
layout(std430, binding = 2) writeonly buffer O { uint v[]; } o;

void main() {
    ivec3 p = ivec3(gl_LocalInvocationID);
    float v = imageLoad(a, p).x;
    imageStore(b, ivec3(p.y, p.x, 5 - p.z), vec4(v + float(p.z), 0.0, 0.0, 0.0));
    if (gl_LocalInvocationIndex == 0u) {
        ivec2 s = imageSize(a);
        o.v[0] = uint(s.x | s.y << 8);
    }
}
