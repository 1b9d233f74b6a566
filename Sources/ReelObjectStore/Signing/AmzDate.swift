import Foundation

/// A signing instant in SigV4's two forms: `20130524T000000Z` (`X-Amz-Date`) and `20130524`
/// (the credential scope's day), both UTC. Whole seconds: the fraction is dropped, as every
/// AWS SDK does.
public struct AmzDate: Hashable, Sendable {
    /// Seconds since 1970-01-01T00:00:00Z.
    public let epochSeconds: Int64

    public init(epochSeconds: Int64) { self.epochSeconds = epochSeconds }

    public init(_ date: Date) { self.init(epochSeconds: Int64(date.timeIntervalSince1970.rounded(.down))) }

    /// `YYYYMMDD'T'HHMMSS'Z'`.
    public var timestamp: String {
        let (year, month, day) = Self.civil(days: epochSeconds.floorDivided(by: 86_400))
        let second = epochSeconds - epochSeconds.floorDivided(by: 86_400) * 86_400
        return Self.digits(year, 4) + Self.digits(month, 2) + Self.digits(day, 2) + "T"
            + Self.digits(second / 3600, 2) + Self.digits(second / 60 % 60, 2) + Self.digits(second % 60, 2) + "Z"
    }

    /// `YYYYMMDD`: the day in the credential scope.
    public var day: String { String(timestamp.prefix(8)) }

    public var date: Date { Date(timeIntervalSince1970: TimeInterval(epochSeconds)) }

    /// Parses `YYYYMMDD'T'HHMMSS'Z'`; `nil` for anything else.
    public init?(timestamp text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 16, bytes[8] == UInt8(ascii: "T"), bytes[15] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(4..<6), let day = number(6..<8),
              let hour = number(9..<11), let minute = number(11..<13), let second = number(13..<15),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else { return nil }
        self.init(epochSeconds: Self.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second)
    }

    private static func digits(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    // Howard Hinnant's civil-from-days and days-from-civil (proleptic Gregorian calendar).
    static func civil(days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = z.floorDivided(by: 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDivided(by: 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
