import CFFmpeg
import ReelCore

/// Which of the encoders Reel uses this machine's libavcodec has: what an agent advertises in
/// `CAPS encoders=`.
public enum EncoderCatalog {
    /// The video encoders (one per `VideoCodec`) then AAC, in that order, keeping those present.
    public static var available: [String] {
        (VideoCodec.allCases.map(\.encoderName) + ["aac"]).filter { avcodec_find_encoder_by_name($0) != nil }
    }
}
