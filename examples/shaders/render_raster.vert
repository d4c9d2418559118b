#version 460
// The raster demo's vertex shader: object space to world space by the draw's transform,
// world to clip space by the frame's camera.
layout(location = 0) in vec3 pos;
layout(location = 0) out vec3 world;
layout(std430, binding = 2) readonly buffer Frame {
    vec4 view_proj[4];  // rows of the world-to-clip matrix
    vec4 eye;           // xyz
    vec4 light;         // xyz towards the light, w = AO ray length
    uvec4 dims;         // width, height, AO samples per pixel
} frame;
layout(push_constant) uniform Draw {
    vec4 model[3];  // rows of the object-to-world transform
    vec4 albedo;    // rgb, w = 1 for the textured ground
} draw;

void main() {
    vec4 p = vec4(pos, 1.0);
    world = vec3(dot(draw.model[0], p), dot(draw.model[1], p), dot(draw.model[2], p));
    vec4 w = vec4(world, 1.0);
    gl_Position = vec4(dot(frame.view_proj[0], w), dot(frame.view_proj[1], w), dot(frame.view_proj[2], w),
                       dot(frame.view_proj[3], w));
}
