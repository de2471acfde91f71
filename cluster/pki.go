package main

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// ca is the one certificate authority of a cluster: it signs the apiserver's
// and the node's serving certificates and every client certificate, and the
// controller-manager signs CSRs with it.
type ca struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	return n
}

func keyPEM(key crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func newCA() (*ca, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "effect-kube-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issued is a certificate and its key, PEM encoded.
type issued struct{ cert, key []byte }

// issue signs a leaf: a client certificate when hosts is empty, else a serving
// certificate (also usable as a client) for those IPs and DNS names.
func (c *ca) issue(cn string, orgs []string, hosts []string) (issued, error) {
	key, err := newKey()
	if err != nil {
		return issued{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, key.Public(), c.key)
	if err != nil {
		return issued{}, err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return issued{}, err
	}
	return issued{cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), key: kp}, nil
}

// write puts name.crt and name.key in dir.
func (i issued) write(dir, name string) (certPath, keyPath string, err error) {
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err = os.WriteFile(certPath, i.cert, 0o600); err != nil {
		return
	}
	err = os.WriteFile(keyPath, i.key, 0o600)
	return
}

// serviceAccountKeys writes the key pair the apiserver signs service-account
// tokens with (and the controller-manager's token controller too).
func serviceAccountKeys(dir string) (privPath, pubPath string, err error) {
	key, err := newKey()
	if err != nil {
		return "", "", err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", err
	}
	privPath, pubPath = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := os.WriteFile(privPath, kp, 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return "", "", err
	}
	return privPath, pubPath, nil
}

// kubeconfig is a self-contained kubeconfig (certificates inline).
func kubeconfig(server string, caPEM []byte, user string, id issued) []byte {
	b64 := func(b []byte) string { return base64Std(b) }
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: effect-kube
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: %s
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: effect-kube
  context:
    cluster: effect-kube
    user: %s
    namespace: default
current-context: effect-kube
`, server, b64(caPEM), user, b64(id.cert), b64(id.key), user))
}
