extension HistorySync {
    /// How a ``HistorySync`` reckons time and cuts its window into requests. The defaults suit production; tests
    /// give a clock of their own and shorter spans.
    package struct Configuration: Sendable {
        /// What "now" is: the end of a window asked up to now, and the reference of Apple's history limit.
        package var clock: any HistoryClock = SystemHistoryClock()
        /// Times a range may start over after an expired pagination token before the sync gives up. Default 5.
        package var maximumRestarts = 5
        /// How far inside Apple's history limit (``NotificationHistoryRequest/historyRetention(in:)``) the oldest
        /// range asked for starts, so that clock skew and a long run do not cross the limit. Default an hour.
        package var startDateMargin: Duration = .seconds(3_600)
        /// How long before now a window ends at the latest: Apple's history may not list a notification the moment
        /// it is sent, and a range recorded as covered is not asked again. Default 5 minutes.
        package var settleTime: Duration = .seconds(300)
        /// The longest range one request sequence covers: an expired pagination token restarts at most this much.
        /// Default a day.
        package var rangeLimit: Duration = .seconds(86_400)
        /// How much of what earlier syncs covered, back from the window's end, a sync asked to look again asks Apple
        /// for once more (`history.secondLookSeconds`): Apple's history may list a notification hours after it was
        /// sent, after a turn covered its send time. With turns every `interval`, a notification listed up to
        /// `secondLook - interval + settleTime` late is found. Zero: no second look. Six hours by default: with
        /// hourly turns it finds a lag of up to five hours (the three hours that showed the gap, with room), for six
        /// times the first looks' requests (Docs/history.md weighs a longer one).
        package var secondLook: Duration = .seconds(21_600)

        /// The defaults above.
        package init() {}
    }
}
