# strata: after unpacking. Data and log directories owned by strata (0750), the config
# readable by the service only, and systemd told about the units.
install -d -o strata -g strata -m 0750 /var/lib/strata /var/log/strata
chown root:strata /etc/strata/strata.conf
chmod 0640 /etc/strata/strata.conf
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null 2>&1 || :
	if [ "$1" -eq 1 ]; then
		systemctl enable strata-server.service >/dev/null 2>&1 || :
	else
		systemctl try-restart strata-server.service >/dev/null 2>&1 || :
	fi
fi
exit 0
