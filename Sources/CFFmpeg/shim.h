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
#include <libavutil/pixdesc.h>
#include <libavutil/audio_fifo.h>
#include <libavutil/time.h>
#include <libavutil/mastering_display_metadata.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>

/* Function-like macros do not import into Swift; these wrap them. */
static inline int reel_averror(int e) { return AVERROR(e); }
static inline int reel_averror_eof(void) { return AVERROR_EOF; }
static inline int reel_eagain(void) { return AVERROR(EAGAIN); }
static inline int64_t reel_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline void reel_err2str(int err, char *buf, size_t size) { av_strerror(err, buf, size); }
static inline AVRational reel_time_base_q(void) { return AV_TIME_BASE_Q; }
static inline int reel_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int reel_codec_flag_closed_gop(void) { return AV_CODEC_FLAG_CLOSED_GOP; }
static inline int reel_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int reel_pix_fmt_flag_alpha(void) { return AV_PIX_FMT_FLAG_ALPHA; }
static inline int reel_pix_fmt_flag_rgb(void) { return AV_PIX_FMT_FLAG_RGB; }
static inline int reel_pix_fmt_flag_pal(void) { return AV_PIX_FMT_FLAG_PAL; }
static inline int reel_pix_fmt_flag_planar(void) { return AV_PIX_FMT_FLAG_PLANAR; }
static inline int reel_pix_fmt_flag_be(void) { return AV_PIX_FMT_FLAG_BE; }
static inline int reel_pix_fmt_flag_bitstream(void) { return AV_PIX_FMT_FLAG_BITSTREAM; }
static inline int reel_pix_fmt_flag_float(void) { return AV_PIX_FMT_FLAG_FLOAT; }
/// The brightest light an HDR frame's metadata states, in cd/m²: its content light level's
/// MaxCLL, else its mastering display's peak; 0 when it states neither (as libavfilter's
/// ff_determine_signal_peak reads them).
static inline double reel_frame_metadata_peak(const AVFrame *frame) {
    const AVFrameSideData *sd = av_frame_get_side_data(frame, AV_FRAME_DATA_CONTENT_LIGHT_LEVEL);
    if (sd) {
        const AVContentLightMetadata *clm = (const AVContentLightMetadata *)sd->data;
        if (clm->MaxCLL > 0) return clm->MaxCLL;
    }
    sd = av_frame_get_side_data(frame, AV_FRAME_DATA_MASTERING_DISPLAY_METADATA);
    if (sd) {
        const AVMasteringDisplayMetadata *m = (const AVMasteringDisplayMetadata *)sd->data;
        if (m->has_luminance && m->max_luminance.den != 0) return av_q2d(m->max_luminance);
    }
    return 0;
}
static inline int reel_seek_flag_backward(void) { return AVSEEK_FLAG_BACKWARD; }
static inline int reel_fmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int reel_fmt_nofile(void) { return AVFMT_NOFILE; }
static inline int reel_fmt_noheader(void) { return AVFMTCTX_NOHEADER; }
static inline int reel_io_flag_write(void) { return AVIO_FLAG_WRITE; }
static inline int reel_codec_cap_delay(void) { return AV_CODEC_CAP_DELAY; }
static inline int reel_codec_cap_variable_frame_size(void) { return AV_CODEC_CAP_VARIABLE_FRAME_SIZE; }
static inline int reel_disposition_attached_pic(void) { return AV_DISPOSITION_ATTACHED_PIC; }
static inline int reel_sws_flags_exact(void) { return SWS_BICUBIC | SWS_ACCURATE_RND | SWS_BITEXACT; }
static inline int reel_codec_flag_bitexact(void) { return AV_CODEC_FLAG_BITEXACT; }
static inline int reel_fmt_flag_bitexact(void) { return AVFMT_FLAG_BITEXACT; }
static inline int reel_profile_unknown(void) { return FF_PROFILE_UNKNOWN; }
static inline int reel_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int reel_disposition_default(void) { return AV_DISPOSITION_DEFAULT; }

/* Interrupt callback for AVFormatContext.interrupt_callback: `opaque` points at a deadline in
   av_gettime_relative() microseconds; blocking I/O and probing give up once it has passed. */
static inline int reel_deadline_interrupt(void *opaque) {
    const int64_t *deadline = (const int64_t *)opaque;
    return deadline != NULL && av_gettime_relative() > *deadline;
}
static inline int (*reel_deadline_interrupt_callback(void))(void *) { return reel_deadline_interrupt; }
#endif
