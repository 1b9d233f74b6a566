import ArgumentParser
import Logging
import ReelCoordinator
import ReelCore
import ReelProtocol

// Values that commands take as arguments, each parsed once, where ArgumentParser reads the
// command line: an invalid one is refused with the option's help, before `validate()` and
// `run()`, which then use typed values (no second parse, no force unwraps).

/// An address to listen on, `HOST:PORT` or `[IPV6]:PORT` (port 0 picks a free one).
extension HostPort: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument, for: .listen) }
    public var defaultValueDescription: String { description }
}

/// Seconds as a decimal (`2.5`) or an exact fraction (`1001/30000`).
extension Rational: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
    public var defaultValueDescription: String { description }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--set name=value` (a template's variable); the value is read by the variable's type later,
/// when the template is known.
extension VariableAssignment: ExpressibleByArgument {
    public init?(argument: String) { self.init(parsing: argument) }
}

/// A duration: `90` or `90s`, `30m`, `12h`, `7d` (`DurationText`).
struct DurationArgument: ExpressibleByArgument, CustomStringConvertible {
    let seconds: Double
    let description: String

    init?(argument: String) {
        guard let seconds = DurationText.seconds(argument) else { return nil }
        self.init(argument, seconds: seconds)
    }

    /// A default: its text as the help shows it, and what it means.
    init(_ text: String, seconds: Double) {
        self.seconds = seconds
        description = text
    }

    var defaultValueDescription: String { description }
}

/// How long something is kept: a duration, or `0` / `forever` to keep it (`seconds` nil).
struct RetentionArgument: ExpressibleByArgument, CustomStringConvertible {
    let seconds: Double?
    let description: String

    init?(argument: String) {
        guard let seconds = DurationText.retention(argument) else { return nil }
        self.init(argument, seconds: seconds)
    }

    /// A default: its text as the help shows it, and what it means (nil: keep).
    init(_ text: String, seconds: Double?) {
        self.seconds = seconds
        description = text
    }

    var defaultValueDescription: String { description }
}
