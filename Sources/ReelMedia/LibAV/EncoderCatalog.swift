import CFFmpeg
import ReelCore

/// Which of the encoders Reel uses this machine's libavcodec has: what an agent advertises in
/// `CAPS encoders=`.
public enum EncoderCatalog {
    /// The video encoders (one per `VideoCodec`) then the audio ones (one per `AudioCodec`), in
    /// that order, keeping those present.
    public static var available: [String] {
        (VideoCodec.allCases.map(\.encoderName) + AudioCodec.allCases.map(\.encoderName)).filter { avcodec_find_encoder_by_name($0) != nil }
    }
}
