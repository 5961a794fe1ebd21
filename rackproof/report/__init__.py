"""The acceptance report's parts, built from plain data (no pytest here).

    outcomes      a test's outcome in the report's words, from its pytest phases
    subjects      what a test touched (nodes, interfaces, pairs), read from its parameters
    waivers       the waiver file: who accepted which failure, until when
    verdict       capabilities and the decision: ACCEPTED / ACCEPTED WITH LIMITS / REJECTED
    facts         what each node reported (evidence and declared facts), and whether it was reached
    topology      the rack as built, each lane, link, bond and node with the state of its checks
    measurements  figures grouped by kind, with a row for every check that should have given one
    baseline      what changed since an earlier results.json
    document      results.json: assembling it, its schema and version
    junit         the run's and each figure's properties in junit.xml, for CI
    summary       the one-screen Markdown summary (GITHUB_STEP_SUMMARY, else summary.md)
    charts, topology_svg, style, html    drawing report.html from a results document
"""
