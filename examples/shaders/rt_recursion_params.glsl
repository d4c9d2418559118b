// The recursion example's bindings and push constants (shared by every stage).
layout(binding = 0) uniform accelerationStructureEXT tlas;
layout(std430, binding = 1) readonly buffer Rays { Ray rays[]; };
layout(std430, binding = 2) writeonly buffer Trails { Trail trails[]; };
layout(push_constant) uniform Params {
    uint count;
    uint mode;       // 0: a shadow ray from the first hit; 1: bounce up to max_level traces deep
    uint max_level;
    uint pad;
    vec4 light;      // direction towards the light
};
