/// An experience-phase message with the thread parameters that were in force when it was
/// written (its priors).
public struct Experience: Sendable, Hashable {
    /// The message.
    public var message: Message
    /// The thread's parameters just before the message: the latest change recorded at or
    /// before its creation time.
    public var priorParameters: ParameterSet

    /// Creates an experience value.
    public init(message: Message, priorParameters: ParameterSet) {
        self.message = message
        self.priorParameters = priorParameters
    }
}
