// What the reformation workload's shaders share (rt_reform.rs).
struct Payload {
    uint acc;      // sum of the any-hit shaders' hashes (order-independent)
    uint anyhits;  // any-hit invocations
    float t;       // closest hit's t, -1.0 on a miss
    int instance;  // closest hit's instance index, -1 on a miss
};

// Whether the any-hit shaders ignore primitive `prim` of instance `inst`: three in four
// candidates are holes, so a ray passes several layers.
bool hole(int inst, int prim) {
    return ((inst * 7 + prim) & 3) != 0;
}
