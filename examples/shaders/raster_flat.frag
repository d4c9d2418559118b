#version 460
// Fill-rate work: every fragment writes the push-constant colour, nothing else.
layout(location = 0) in vec4 v_attr;
layout(location = 0) out vec4 color;
layout(push_constant) uniform Params {
    vec4 color;
    vec4 offset;
    uvec4 misc;
} p;

void main() {
    color = p.color;
}
