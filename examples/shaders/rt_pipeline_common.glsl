// What the ray-tracing pipeline example's shaders share (rt_pipeline.rs).
struct Hit {
    float t;
    int primitive;
    int custom_index;
    uint kind;  // the committed intersection type: 0 none, 1 triangle
};

// Sphere p of the procedural scene (xyz centre, w radius): a 4x4 grid in the plane z = 0.
vec4 sphere(int p) {
    return vec4(float(p % 4) * 2.0 - 3.0, float(p / 4) * 2.0 - 3.0, 0.0, 0.8);
}

// Where a ray enters sphere s (-1.0: it misses it).
float enter_sphere(vec3 o, vec3 d, vec4 s) {
    vec3 oc = o - s.xyz;
    float a = dot(d, d);
    float b = dot(oc, d);
    float c = dot(oc, oc) - s.w * s.w;
    float disc = b * b - a * c;
    if (disc < 0.0) {
        return -1.0;
    }
    return (-b - sqrt(disc)) / a;
}

// The hit kind the intersection shader reports, and the attribute it passes (checked by
// the closest-hit shader: custom index + primitive * 100).
const uint SPHERE_KIND = 3u;
