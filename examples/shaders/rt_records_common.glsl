// What the shader-record and callable checks of rt_recursion.rs share: the bindings, and
// what each launch index writes.
struct Ray {
    vec4 origin_tmin;
    vec4 dir_tmax;
};
struct Out {
    uint raygen;     // the ray generation record's tag * 16 + the group's own TAG
    float raygen_v;  // the record's v.y (scalar layout: at byte 8 of the data)
    uint hit;        // what the closest-hit or miss shader made of its record
    uint call;       // the launch index through the callable chain
};
const uint NO_CALL = 0xFFFFFFFFu;
