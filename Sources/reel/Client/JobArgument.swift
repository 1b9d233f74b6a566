import ArgumentParser

/// `JOB`, the job id that `pause`, `resume`, `budget`, `priority`, `events`, `cancel`, `retry`,
/// `delete` and `fetch` act on: a positive number, checked as the command line is parsed.
struct JobArgument: ParsableArguments {
    @Argument(help: "The job id.") var job: Int64

    func validate() throws { if job <= 0 { throw ValidationError("JOB is a job id, a positive number") } }
}

/// A command on one job, named by its `JobArgument` (`@OptionGroup var target: JobArgument`).
protocol JobCommand {
    var target: JobArgument { get }
}

extension JobCommand {
    var job: Int64 { target.job }
}
