/// How far a render has come; handed to a progress callback after every frame.
public struct RenderProgress: Sendable {
    public var framesDone: Int
    public var frameCount: Int
    public var fraction: Double { frameCount == 0 ? 1 : Double(framesDone) / Double(frameCount) }
}
