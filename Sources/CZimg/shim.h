#ifndef REEL_CZIMG_SHIM_H
#define REEL_CZIMG_SHIM_H
#include <zimg.h>

/// ZIMG_API_VERSION is a function-like macro expansion Swift cannot import.
static inline unsigned reel_zimg_api_version(void) { return ZIMG_API_VERSION; }
/// Plane `i` of a buffer, whole in memory (Swift cannot reach the anonymous `plane` structs).
static inline void reel_zimg_set_input_plane(zimg_image_buffer_const *buffer, unsigned i, const void *data, ptrdiff_t stride) {
    buffer->plane[i].data = data;
    buffer->plane[i].stride = stride;
    buffer->plane[i].mask = ZIMG_BUFFER_MAX;
}
static inline void reel_zimg_set_output_plane(zimg_image_buffer *buffer, unsigned i, void *data, ptrdiff_t stride) {
    buffer->plane[i].data = data;
    buffer->plane[i].stride = stride;
    buffer->plane[i].mask = ZIMG_BUFFER_MAX;
}
/// The part of the source image a graph reads, in subpixels (scaling a crop of it).
static inline void reel_zimg_set_active_region(zimg_image_format *format, double left, double top, double width, double height) {
    format->active_region.left = left;
    format->active_region.top = top;
    format->active_region.width = width;
    format->active_region.height = height;
}
#endif
