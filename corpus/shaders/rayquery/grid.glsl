// Shared by the ray-query shaders of the corpus: the `grid` scene (examples/src/bin/corpus/
// scene.rs) and rays aimed at it. Ray (i, j) of a 16x16 grid starts at z = -10 and travels
// along +z; the x and y offsets differ, so no ray runs along a triangle edge or a box face.

vec3 gridOrigin(uint i, uint j) {
    return vec3(-0.4 + (float(i) + 0.37) * 0.2375, -0.4 + (float(j) + 0.61) * 0.2375, -10.0);
}

// The boxes of the scene's procedural BLAS, in object space, by geometry and primitive.
void boxOf(int geometry, int primitive, out vec3 lo, out vec3 hi) {
    if (geometry == 0) {
        lo = vec3(0.1, 0.1, 0.0); hi = vec3(0.6, 0.6, 0.5);
    } else if (primitive == 0) {
        lo = vec3(0.5, 0.1, 0.2); hi = vec3(0.9, 0.9, 0.4);
    } else {
        lo = vec3(0.1, 0.6, -0.3); hi = vec3(0.4, 0.9, 0.1);
    }
}

// Slab test of a ray against a box: the entry distance (clamped to tmin), or -1 for a miss.
// Drivers may report boxes the ray misses (AABB tests may be conservative), so shaders
// confirm procedural candidates with this exact test.
float slab(vec3 o, vec3 d, vec3 lo, vec3 hi, float tmin, float tmax) {
    vec3 inv = 1.0 / d;
    vec3 t0 = (lo - o) * inv, t1 = (hi - o) * inv;
    vec3 near = min(t0, t1), far = max(t0, t1);
    float tn = max(max(near.x, near.y), max(near.z, tmin));
    float tf = min(min(far.x, far.y), min(far.z, tmax));
    return tn <= tf ? tn : -1.0;
}
