/// Per-job ceilings that keep a mistaken composition (a still held for 10⁶ s, a frame
/// duration of a microsecond) from becoming a job of millions of frames or tasks.
///
/// Each is far above any real long-form job: 24 hours at 60 fps, 240 fps, and a 24-hour job
/// in chunks of under a second. Frame count and frame rate are validation errors with the
/// JSON path to fix; the chunk count is the planner's to keep (it makes chunks longer).
public enum RenderLimits {
    /// Most frames one job may have: 24 h at 60 fps.
    public static let maximumFrames = 24 * 3600 * 60
    /// The shortest frame duration: 1/240 s (240 frames per second).
    public static let minimumFrameDuration = Rational(1, 240)
    /// Most video chunks (tasks) one job is cut into.
    public static let maximumChunks = 100_000
    /// Longest target chunk length accepted from `--chunk-seconds` (an hour).
    public static let maximumChunkSeconds = Rational(3600)

    /// What is wrong with a requested target chunk length (`--chunk-seconds`, a `SUBMIT`'s
    /// `chunkSeconds`), or nil.
    public static func problem(withChunkSeconds s: Rational) -> String? {
        if s <= .zero { return "must be > 0" }
        if s > maximumChunkSeconds { return "must be at most \(maximumChunkSeconds.num) s" }
        return TimeDomain.problem(with: s)
    }
}
