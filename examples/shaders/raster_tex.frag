#version 460
// Texture sampling: per pixel, an implicit-LOD sample (the quad's derivatives select the
// level), an explicit fractional LOD between two levels, a bilinear sample at a fixed
// coordinate, a repeated coordinate, a biased implicit LOD, explicit gradients, and a
// clamp-to-border sample outside the image, into a buffer.
layout(location = 0) in vec4 v_attr;
layout(location = 0) out vec4 color;
layout(binding = 0) uniform sampler2D nearest_tex;
layout(binding = 1) uniform sampler2D linear_tex;
layout(std430, binding = 2) buffer Out { vec4 results[]; };
layout(binding = 3) uniform sampler2D border_tex;
layout(push_constant) uniform Params {
    vec4 color;
    vec4 offset;
    uvec4 misc;
} p;

void main() {
    uint i = 8u * (uint(gl_FragCoord.x) + uint(gl_FragCoord.y) * p.misc.x);
    vec2 uv = v_attr.xy;
    results[i] = texture(nearest_tex, uv);
    results[i + 1u] = textureLod(linear_tex, uv, 1.5);
    results[i + 2u] = textureLod(linear_tex, vec2(3.75, 6.25) / 64.0, 0.0);
    results[i + 3u] = textureLod(nearest_tex, vec2(1.0 + 10.5 / 64.0, -1.0 + 20.5 / 64.0), 0.0);
    results[i + 4u] = texture(nearest_tex, uv, 1.0);
    results[i + 5u] = textureGrad(nearest_tex, uv, vec2(8.0 / 64.0, 0.0), vec2(0.0, 8.0 / 64.0));
    results[i + 6u] = textureLod(border_tex, vec2(-0.25, 0.5), 0.0);
    results[i + 7u] = textureLod(border_tex, vec2(0.5, 1.25), 0.0);
    color = results[i];
}
