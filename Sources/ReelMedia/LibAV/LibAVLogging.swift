import CFFmpeg

/// libav's own logging (x264 statistics, muxer notes) goes to stderr and would drown the
/// progress bar; Reel reports errors itself, so the command line keeps libav to errors only.
public enum LibAVLogging {
    public static func errorsOnly() { av_log_set_level(AV_LOG_ERROR) }
    /// Nothing at all: for commands that report libav's failures in their own words (`probe`,
    /// `validate`, `thumbnail`), where a raw `[png @ 0x…]` line is noise.
    public static func quiet() { av_log_set_level(AV_LOG_QUIET) }
    public static func verbose() { av_log_set_level(AV_LOG_INFO) }
}
