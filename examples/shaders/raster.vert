#version 460
// The raster checks' vertex shader: a clip-space position per vertex, moved by
// `offset` per instance; the varying carries the position's viewport coordinates
// (uv in 0..1 and pixels), so fragment shaders know what interpolation must give.
layout(location = 0) in vec4 pos;
layout(location = 0) out vec4 v_attr;
layout(push_constant) uniform Params {
    vec4 color;
    vec4 offset;  // added to the position per instance
    uvec4 misc;   // x, y: target size in pixels
} p;

void main() {
    vec4 clip = pos + p.offset * float(gl_InstanceIndex);
    gl_Position = clip;
    gl_PointSize = 1.0;
    vec2 uv = clip.xy / clip.w * 0.5 + 0.5;
    v_attr = vec4(uv, uv * vec2(p.misc.xy));
}
