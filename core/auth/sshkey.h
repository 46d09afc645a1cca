/*
 * SSH key pairs for the vcjob ssh plugin (sshkey.c).
 */
#ifndef VOLRAY_SSHKEY_H
#define VOLRAY_SSHKEY_H

/* A new RSA key of bits (1024 to 8192): *priv the private key's PEM
   (PKCS#1), *pub its authorized_keys line; both malloc'd. 0, or -1 with
   *cause. */
int sshkey_rsa(unsigned bits, char **priv, char **pub, char **cause);

#endif
