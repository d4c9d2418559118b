// What the ray-tracing pipeline example's shaders share (rt_pipeline.rs).
struct Hit {
    float t;
    int primitive;
    int custom_index;
    uint kind;  // the committed intersection type: 0 none, 1 triangle
};
