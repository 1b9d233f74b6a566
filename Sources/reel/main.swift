import ArgumentParser
struct Reel: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Reel: a distributed render farm for video compositions.")
}
Reel.main()
