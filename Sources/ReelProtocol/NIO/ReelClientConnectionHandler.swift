import NIOCore

/// A request written into a client channel: the message and the promise its reply completes.
struct OutboundRequest {
    var message: Message
    var reply: EventLoopPromise<Message>
}

/// Runs the client side of one connection with a `ClientConnectionStateMachine`: performs the
/// handshake (completing `handshake`), then sends queued requests one at a time and completes
/// each request's promise with its reply — `ERR` replies fail it with a `ReelProtocolError`.
final class ReelClientConnectionHandler: ChannelDuplexHandler {
    typealias InboundIn = Frame
    typealias OutboundIn = OutboundRequest
    typealias OutboundOut = Message

    private var machine: ClientConnectionStateMachine
    private let handshake: EventLoopPromise<Void>
    private var handshakeDone = false
    /// Promises of requests not yet answered, oldest first (same order as the machine's queue).
    private var replies: [EventLoopPromise<Message>] = []

    init(machine: ClientConnectionStateMachine, handshake: EventLoopPromise<Void>) {
        self.machine = machine
        self.handshake = handshake
    }

    func channelActive(context: ChannelHandlerContext) {
        perform(machine.connected(), context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        machine.closed()
        failAll(ReelProtocolError(.internal, "connection closed"))
        context.fireChannelInactive()
    }

    /// A connection that never became active (refused, timed out) never sees `channelInactive`:
    /// fail the handshake here, or its promise would leak (a debug-build crash).
    func handlerRemoved(context: ChannelHandlerContext) {
        failAll(ReelProtocolError(.internal, "connection closed"))
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        do {
            perform(machine.received(try Message.parse(line: frame.line, payload: frame.payload)), context: context)
        } catch {
            perform(machine.receivedMalformed(error), context: context)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        let error = error as? ReelProtocolError ?? ReelProtocolError(.internal, "\(error)")
        perform(machine.receivedMalformed(error), context: context)
        failAll(error)
        context.close(promise: nil)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        replies.append(request.reply)
        perform(machine.sendRequest(request.message), context: context)
        promise?.succeed(())
    }

    private func perform(_ action: ClientConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case let .send(message):
            context.writeAndFlush(wrapOutboundOut(message), promise: nil)
        case let .handshakeSucceeded(next):
            handshakeDone = true
            handshake.succeed(())
            if let next { context.writeAndFlush(wrapOutboundOut(next), promise: nil) }
        case let .handshakeFailed(error), let .closeWithError(error):
            failAll(error)
            context.close(promise: nil)
        case let .deliver(reply, next):
            let promise = replies.removeFirst()
            if case let .error(code, message) = reply {
                promise.fail(ReelProtocolError(code, message))
            } else {
                promise.succeed(reply)
            }
            if let next { context.writeAndFlush(wrapOutboundOut(next), promise: nil) }
        }
    }

    private func failAll(_ error: ReelProtocolError) {
        if !handshakeDone {
            handshakeDone = true
            handshake.fail(error)
        }
        let pending = replies
        replies = []
        for promise in pending { promise.fail(error) }
    }
}
