import CFFmpeg

/// libav's own logging (x264 statistics, muxer notes) goes to stderr and would drown the
/// progress bar; Reel reports errors itself, so the command line keeps libav to errors only.
public enum LibAVLogging {
    public static func errorsOnly() { av_log_set_level(AV_LOG_ERROR) }
    public static func verbose() { av_log_set_level(AV_LOG_INFO) }
}
