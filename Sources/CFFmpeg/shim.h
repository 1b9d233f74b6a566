#ifndef REEL_CFFMPEG_SHIM_H
#define REEL_CFFMPEG_SHIM_H
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/display.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/mathematics.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

/* Function-like macros do not import into Swift; these wrap them. */
static inline int reel_averror(int e) { return AVERROR(e); }
static inline int reel_averror_eof(void) { return AVERROR_EOF; }
static inline int reel_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t reel_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline void reel_err2str(int err, char *buf, size_t size) { av_strerror(err, buf, size); }
#endif
