# strata: before unpacking. Creates the strata system user and group.
getent group strata >/dev/null || groupadd -r strata
getent passwd strata >/dev/null || \
	useradd -r -g strata -d /var/lib/strata -s /sbin/nologin -c "strata cache" strata
exit 0
