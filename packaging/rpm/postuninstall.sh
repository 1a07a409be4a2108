# strata: after erasing. The data in /var/lib/strata, the logs and the strata user stay
# (rpm has no purge; remove them by hand); a changed config is kept as .rpmsave.
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null 2>&1 || :
fi
exit 0
