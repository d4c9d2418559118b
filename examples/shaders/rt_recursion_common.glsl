// What the recursion example's shaders and its ray-query reference share (rt_recursion.rs).
struct Ray {
    vec4 origin_tmin;
    vec4 dir_tmax;
};

// The result of one launch index: a hash of the primitives hit bounce after bounce (and
// of the final miss), the bounces, the first hit's t, whether the first hit is in shadow.
struct Trail {
    uint hash;
    uint bounces;
    float t;
    uint shadowed;
};

const uint HASH_START = 2166136261u;
const uint MISS_TAG = 0xABCDu;
// Ray flags: opaque, and a shadow ray (opaque, terminate on first hit).
const uint OPAQUE = 1u;
const uint SHADOW = 5u;
const uint SKIP_CLOSEST_HIT = 8u;
const float EPSILON = 1.0e-3;
const float FAR = 1.0e4;

uint mix_hash(uint h, uint v) {
    return (h ^ v) * 16777619u;
}

// What a hit contributes to the hash.
uint hit_tag(int primitive, int custom_index) {
    return uint(primitive) + 1u + 7919u * uint(custom_index);
}

// A bounce: the direction mirrored in the axis plane primitive % 3 picks (exact in floats).
vec3 bounce(vec3 d, int primitive) {
    int a = primitive % 3;
    if (a == 0) {
        d.x = -d.x;
    } else if (a == 1) {
        d.y = -d.y;
    } else {
        d.z = -d.z;
    }
    return d;
}
