// The payload of camera rays and bounces: the trail so far and the trace depth (1: the ray
// generation shader's trace).
struct Payload {
    uint hash;
    uint bounces;
    float t;
    uint shadowed;
    uint level;
};
