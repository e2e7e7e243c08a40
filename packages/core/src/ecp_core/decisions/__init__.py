"""Version decisions (interval-policy/1): comparisons, retained history, schedules."""
