"""Sparklines of the queue (pure part): where the points go."""
def test_sparkline_points_put_the_busiest_day_on_top_and_zero_on_the_baseline():
    from triage.sparklines import HEIGHT, PAD, points
    pts = [tuple(map(float, p.split(","))) for p in points([0, 2, 4, 0]).split()]
    assert [x for x, _ in pts] == sorted(x for x, _ in pts) and len(pts) == 4
    assert pts[0][1] == pts[3][1] == HEIGHT - PAD     # zero: the baseline
    assert pts[2][1] == PAD                           # the busiest day: the top
    assert pts[1][1] == (HEIGHT / 2)                  # half the busiest: half way
    assert points([]) == "" and len(points([0, 0]).split()) == 2  # all zero still draws a flat line
