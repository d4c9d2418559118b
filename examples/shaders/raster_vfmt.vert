#version 460
// variants: raster_vfmt_float.vert=-DFLOAT raster_vfmt_uint.vert=-DUINT raster_vfmt_sint.vert=-DSINT
// Vertex formats: each vertex writes its attribute, as the vertex shader sees it, to a
// buffer (rasterization is off).
#if defined(FLOAT)
layout(location = 0) in vec4 attr;
#define BITS(v) floatBitsToUint(v)
#elif defined(UINT)
layout(location = 0) in uvec4 attr;
#define BITS(v) (v)
#else
layout(location = 0) in ivec4 attr;
#define BITS(v) uvec4(v)
#endif
layout(std430, binding = 0) buffer Out { uvec4 results[]; };

void main() {
    results[gl_VertexIndex] = BITS(attr);
    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);
    gl_PointSize = 1.0;
}
