import NIOCore

/// Runs one server connection: feeds frames into a `ServerConnectionStateMachine` and carries
/// out its actions, handing authenticated requests to the `ReelRequestHandler`.
///
/// Lives on its channel's event loop; the request handler's async answer is brought back onto
/// that loop before it touches the state machine. Errors close only this connection.
final class ReelServerConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias OutboundOut = Message

    private var machine: ServerConnectionStateMachine
    private let requestHandler: any ReelRequestHandler
    private let handshakeTimeout: TimeAmount
    private var handshakeTimer: Scheduled<Void>?
    private var peer: Peer?

    init(machine: ServerConnectionStateMachine, requestHandler: any ReelRequestHandler, handshakeTimeout: TimeAmount) {
        self.machine = machine
        self.requestHandler = requestHandler
        self.handshakeTimeout = handshakeTimeout
    }

    func channelActive(context: ChannelHandlerContext) {
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        handshakeTimer = context.eventLoop.scheduleTask(in: handshakeTimeout) {
            let (handler, context) = bound.value
            handler.perform(handler.machine.handshakeTimedOut(), context: context)
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        handshakeTimer?.cancel()
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
        case let .authenticated(peer, welcome):
            handshakeTimer?.cancel()
            handshakeTimer = nil
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
}
