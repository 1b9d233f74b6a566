import NIOCore

/// Runs one server connection: feeds frames into a `ServerConnectionStateMachine` and carries
/// out its actions, handing authenticated requests to the `ReelRequestHandler`.
///
/// Lives on its channel's event loop; the request handler's async answer is brought back onto
/// that loop before it touches the state machine. Errors close only this connection. Holds one
/// of the server's `HandshakeSlots` from accept until `WELCOME` (or close), and reports a
/// refused login to the request handler with the peer's address.
final class ReelServerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias OutboundOut = Message

    private var machine: ServerConnectionStateMachine
    private let requestHandler: any ReelRequestHandler
    private let handshakeTimeout: TimeAmount
    private var handshakeTimer: Scheduled<Void>?
    private var peer: Peer?
    private let handshakeSlots: HandshakeSlots?
    private var holdsHandshakeSlot = false

    init(machine: ServerConnectionStateMachine, requestHandler: any ReelRequestHandler, handshakeTimeout: TimeAmount,
         handshakeSlots: HandshakeSlots? = nil) {
        self.machine = machine
        self.requestHandler = requestHandler
        self.handshakeTimeout = handshakeTimeout
        self.handshakeSlots = handshakeSlots
    }

    func channelActive(context: ChannelHandlerContext) {
        context.fireChannelActive()
        if let handshakeSlots {
            guard handshakeSlots.acquire() else {
                perform(machine.tooManyConnections(), context: context)
                return
            }
            holdsHandshakeSlot = true
        }
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        handshakeTimer = context.eventLoop.scheduleTask(in: handshakeTimeout) {
            let (handler, context) = bound.value
            handler.perform(handler.machine.handshakeTimedOut(), context: context)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
        releaseHandshakeSlot()
        machine.closed()
        if let peer {
            let requestHandler = requestHandler
            Task { await requestHandler.connectionClosed(peer) }
            self.peer = nil
        }
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let action: ServerConnectionStateMachine.Action
        do {
            action = machine.received(try Message.parse(line: frame.line, payload: frame.payload))
        } catch {
            action = machine.receivedMalformed(error)
        }
        perform(action, context: context)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if let error = error as? ReelProtocolError {
            perform(machine.framingFailed(error), context: context)
        } else {
            machine.closed()
            context.close(promise: nil)
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? IdleStateHandler.IdleStateEvent, event == .read {
            perform(machine.idleTimedOut(), context: context)
        } else if event is ChannelShouldQuiesceEvent {
            perform(machine.shuttingDown(), context: context)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }

    private func perform(_ action: ServerConnectionStateMachine.Action, context: ChannelHandlerContext) {
        switch action {
        case .none:
            break
        case let .send(message):
            context.writeAndFlush(wrapOutboundOut(message), promise: nil)
        case let .sendAndClose(message):
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(message)).whenComplete { _ in channel.close(promise: nil) }
        case .close:
            context.close(promise: nil)
        case let .refuse(message, failure):
            requestHandler.handshakeFailed(failure, remoteAddress: Self.describe(context.channel.remoteAddress))
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(message)).whenComplete { _ in channel.close(promise: nil) }
        case let .authenticated(peer, welcome):
            handshakeTimer?.cancel()
            handshakeTimer = nil
            releaseHandshakeSlot()
            self.peer = peer
            context.writeAndFlush(wrapOutboundOut(welcome), promise: nil)
        case let .dispatch(request, peer):
            let requestHandler = requestHandler
            let promise = context.eventLoop.makePromise(of: Message.self)
            promise.completeWithTask { try await requestHandler.handle(request, from: peer) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenComplete { result in
                let (handler, context) = bound.value
                let reply: Message
                switch result {
                case let .success(message): reply = message
                case let .failure(error as ReelProtocolError): reply = error.reply
                case .failure: reply = .error(code: .internal, message: "internal error")
                }
                handler.perform(handler.machine.replyReady(reply), context: context)
            }
        }
    }

    private func releaseHandshakeSlot() {
        if holdsHandshakeSlot {
            holdsHandshakeSlot = false
            handshakeSlots?.release()
        }
    }

    /// `host:port` (`[v6]:port`) for logs; NIO's own description repeats the host.
    static func describe(_ address: SocketAddress?) -> String {
        guard let address else { return "unknown" }
        switch address {
        case .v4: return "\(address.ipAddress ?? "?"):\(address.port ?? 0)"
        case .v6: return "[\(address.ipAddress ?? "?")]:\(address.port ?? 0)"
        case .unixDomainSocket: return address.pathname ?? "unix socket"
        }
    }
}
